"""Example strategies: ``python -m peregrine.examples.joiner --name py``."""
