"""Render: pure functions from a Report to terminal text, markdown or JSON. No parsing here."""
