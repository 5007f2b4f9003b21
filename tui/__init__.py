"""The localmem terminal UI (Textual), shipped as ``localmem.tui``."""
