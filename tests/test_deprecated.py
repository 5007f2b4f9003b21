"""Moved and renamed API keeps working for a while, with a warning that says where it went."""

from __future__ import annotations

import sys

import pytest

from localmem._deprecated import Moved, moved_names, renamed_arguments


def test_the_tui_moved_to_its_own_distribution():
    import localmem_tui

    from localmem import tui

    with pytest.warns(DeprecationWarning, match=r"localmem\.tui\.make_app .* localmem_tui") as seen:
        make_app = tui.make_app
    assert make_app is localmem_tui.make_app
    assert seen[0].filename == __file__  # the warning blames the caller, not the helper
    with pytest.warns(DeprecationWarning, match="0.3.0"):
        from localmem.tui import LocalMemApp
    assert LocalMemApp is localmem_tui.LocalMemApp
    with pytest.raises(AttributeError, match="no attribute"):
        tui.something_else  # noqa: B018


def test_a_moved_name_whose_new_home_is_not_installed_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "localmem_tui", None)  # not installed
    getattr_ = moved_names(
        "localmem.tui", {"make_app": Moved("localmem_tui:make_app", "0.2.0", "0.3.0", "pip x")}
    )
    with pytest.warns(DeprecationWarning), pytest.raises(ImportError, match=r"\(pip x\)"):
        getattr_("make_app")


def test_a_renamed_keyword_argument():
    @renamed_arguments({"top_k": "k"}, since="0.2.0", removed_in="0.3.0")
    def search(query: str, *, k: int = 5) -> tuple[str, int]:
        return query, k

    assert search("q", k=3) == ("q", 3)
    with pytest.warns(DeprecationWarning, match=r"search\(top_k=\.\.\.\) .* use k="):
        assert search("q", top_k=7) == ("q", 7)
    with pytest.raises(TypeError, match="both"):
        search("q", top_k=1, k=2)


def test_the_version_is_one_and_the_cli_says_it(capsys):
    from importlib.metadata import version

    from localmem import __version__
    from localmem.cli import main

    assert version("localmem") == __version__  # pyproject reads it from the package
    with pytest.raises(SystemExit):
        main(["--version"])
    assert capsys.readouterr().out.strip() == f"localmem {__version__}"
