"""`localmem ask` (the RAG agent) and `localmem conversation` (its short- and long-term memory)."""

from __future__ import annotations

import argparse

from localmem.console import CommandError, counted, open_memory, print_json, short, store_options


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ask and conversation commands."""
    common = store_options()
    p = sub.add_parser(
        "ask",
        parents=[common],
        help="answer a question from the stored chunks, with conversation memory",
    )
    p.add_argument("question", help="the question, in your own words")
    p.add_argument("--conversation", default="default", help="conversation id (default: default)")
    p.add_argument("--user", dest="scope", help="whose long-term memory (default: shared)")
    p.add_argument("-k", type=int, help="chunks to retrieve (default: conversation.retrieve_k)")
    p.add_argument("--no-stm", action="store_true", help="leave the conversation out")
    p.add_argument("--no-ltm", action="store_true", help="leave long-term memory out")
    p.add_argument("--show-prompt", action="store_true", help="print the prompt, do not answer")
    p.set_defaults(func=cmd_ask)

    p = sub.add_parser("conversation", help="the agent's short- and long-term memory")
    actions = p.add_subparsers(dest="action", metavar="ACTION")
    actions.required = True
    a = actions.add_parser("list", parents=[common], help="conversations with a buffer")
    a.set_defaults(func=cmd_list)
    a = actions.add_parser("show", parents=[common], help="the buffer of a conversation")
    a.add_argument("id", help="the conversation id (`conversation list`)")
    a.set_defaults(func=cmd_show)
    a = actions.add_parser("clear", parents=[common], help="forget a conversation's buffer")
    a.add_argument("id", help="the conversation id (`conversation list`)")
    a.set_defaults(func=cmd_clear)
    a = actions.add_parser("ltm", parents=[common], help="long-term facts, entities, relations")
    a.add_argument("--user", dest="scope", help="whose long-term memory (default: shared)")
    a.add_argument("--forget", action="store_true", help="delete this scope's long-term memory")
    a.set_defaults(func=cmd_ltm)


def _agent(mem, args: argparse.Namespace):
    from localmem.agent import Agent

    return Agent(
        mem,
        use_stm=not getattr(args, "no_stm", False),
        use_ltm=not getattr(args, "no_ltm", False),
        scope=getattr(args, "scope", None),
    )


def cmd_ask(args: argparse.Namespace) -> int:
    """localmem ask"""
    if args.k is not None and args.k < 1:
        raise CommandError("-k must be at least 1")
    with open_memory(args, create=False) as mem:
        agent = _agent(mem, args)
        if args.show_prompt:
            messages = agent.prompt(args.question, conversation_id=args.conversation, k=args.k)
            if args.json:
                print_json([m.as_dict() for m in messages])
            else:
                for m in messages:
                    print(f"--- {m.role}\n{m.render()}")
            return 0
        ans = agent.ask(args.question, conversation_id=args.conversation, k=args.k)
    if args.json:
        print_json(ans)
        return 0
    if ans.served_by == "model-free":  # no model wrote it: say what it is
        print(
            "(extractive: the stored sentences that best match the question, not a written answer)"
        )
    print(ans.answer)
    for i, s in enumerate(ans.sources, 1):
        mark = "*" if i in ans.cited else " "
        print(f" {mark}[{i}] {s.source} ({s.score:.3f}) {short(s.text, 70)}")
    print(
        f"{ans.served_by} · {ans.prompt_tokens} tokens in / {ans.completion_tokens} out "
        f"({ans.tokens_counted_by}) · {ans.seconds:.2f} s"
    )
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    """localmem conversation list"""
    from localmem.conversation import conversations

    with open_memory(args, create=False) as mem:
        rows = conversations(mem)
    if args.json:
        print_json([{"id": c, "messages": n, "tokens": t, "last": at} for c, n, t, at in rows])
        return 0
    for cid, n, tokens, at in rows:
        sizes = f"{counted(n, 'message')}, {counted(tokens, 'token')}"
        print(f"{cid}  {sizes}, last {at:%Y-%m-%d %H:%M}")
    if not rows:
        print("no conversations")
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    """localmem conversation show"""
    with open_memory(args, create=False) as mem:
        stm = _agent(mem, args).stm(args.id)
        messages = stm.messages()
        budget = stm.budget_tokens
    if args.json:
        print_json(messages)
        return 0
    if not messages:
        print(f"conversation {args.id!r} holds no messages")
    for m in messages:
        print(f"{m.role:>9}: {m.content}")
    if messages:
        print(f"({sum(m.tokens for m in messages)} of {budget} tokens)")
    return 0


def cmd_clear(args: argparse.Namespace) -> int:
    """localmem conversation clear"""
    with open_memory(args, create=False) as mem:
        n = _agent(mem, args).stm(args.id).clear()
    print(f"forgot {counted(n, 'message')} of {args.id!r}")
    return 0


def cmd_ltm(args: argparse.Namespace) -> int:
    """localmem conversation ltm"""
    with open_memory(args, create=False) as mem:
        ltm = _agent(mem, args).ltm
        if args.forget:
            counts = ltm.counts()
            ltm.clear()
            print(
                f"forgot {counts['facts']} facts, {counts['entities']} entities, "
                f"{counts['relations']} relations"
            )
            return 0
        facts, entities, relations = ltm.all_facts(), ltm.all_entities(), ltm.all_relations()
    if args.json:
        plain = [{k: v for k, v in vars(f).items() if k != "embedding"} for f in facts]
        print_json({"facts": plain, "entities": entities, "relations": relations})
        return 0
    print(f"facts ({len(facts)}):")
    for f in facts:
        ok = "ok" if f.success else "no answer"
        print(f"  [{f.salience:.1f} {ok}] {short(f.line(), 110)}")
    print(f"entities ({len(entities)}):")
    for e in entities:
        print(f"  {e.name} ({e.type}) x{e.mentions}")
    print(f"relations ({len(relations)}):")
    for r in relations:
        print(f"  {r.line()} x{r.mentions}")
    return 0
