"""Placeholder."""


def build(ctx, core):
    return None
