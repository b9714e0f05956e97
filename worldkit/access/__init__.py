"""Who may see what: the permission graph and the policy over it."""

from worldkit.access.policy import Grant, Policy

__all__ = ["Grant", "Policy"]
