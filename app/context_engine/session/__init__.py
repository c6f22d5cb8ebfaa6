"""Session context (S7): the stable prefix, turn-tail notes and one user turn end to end."""
