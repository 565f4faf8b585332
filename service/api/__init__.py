"""The HTTP API: Flask app factory and one flask-smorest blueprint per resource."""
