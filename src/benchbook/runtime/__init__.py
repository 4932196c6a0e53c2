"""The runtime: runs a harness on case inputs only; never imports eval and never sees gold."""
