"""The model tasks of the conversation memory: entities and relations, question-answer facts."""
