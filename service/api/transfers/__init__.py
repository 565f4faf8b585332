"""Seat transfers: a seat moved to another device with a one-time ticket."""
