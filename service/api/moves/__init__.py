"""Moves: play, draw, mark, end-turn, and any move object as listed by legal-moves."""
