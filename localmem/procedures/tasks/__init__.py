"""The model tasks of procedural memory: abstraction of a session, reflection on a failure."""
