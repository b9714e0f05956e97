"""InfoOrgBench on worldkit: packets from public sources, instructions, scoring and baselines."""
