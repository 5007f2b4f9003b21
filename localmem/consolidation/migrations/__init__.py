"""This mechanism's migrations (named and ordered with every other; see localmem.store.db)."""
