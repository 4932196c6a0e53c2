"""Evaluation: graders, judges, scorecards and compare. Ground truth meets predictions only here."""
