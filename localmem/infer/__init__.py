"""Memories that stay true: facts extracted on add and reconciled with what is
stored (ADD, UPDATE, INVALIDATE, NONE), by the engine or by honest rules.

- :mod:`localmem.infer.slots`: which single-valued slot a fact fills (model-free);
- :mod:`localmem.infer.task`: the ``reconcile`` task (prompt, schema, rules);
- :mod:`localmem.infer.plan`: extraction, neighbours and decisions for one add;
- :mod:`localmem.infer.apply`: the decisions written in one unit, with their history.
"""
