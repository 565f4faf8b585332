"""Games: create, view, deal, legal moves, score, position."""
