"""Information sets for bots: samples of what a seat cannot see."""
