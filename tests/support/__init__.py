"""Shared test helpers: fixtures' builders, loopback servers, drivers."""
