#!/usr/bin/env python3
"""A demo agent for the `capitals` dataset: answers from a small, deliberately incomplete atlas.

Run by Benchbook as a `command` harness: the question arrives on stdin (and in
BENCHBOOK_TASK); the answer goes to stdout. It never sees the expected answer.
"""

import sys

ATLAS = {"France": "Paris", "Japan": "Tokyo", "Kenya": "Nairobi", "Peru": "Lima", "Canada": "Toronto"}

question = sys.stdin.read()
answer = next((city for country, city in ATLAS.items() if country in question), "I don't know")
print(answer)
