"""The chaos suite (chaos.py) and its tools: fault proxy, sampler, analysis, fleet processes."""
