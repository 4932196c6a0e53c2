"""Row sources: files (CSV, JSONL, JSON, Parquet, gzip) and Hugging Face (viewer, raw files)."""
