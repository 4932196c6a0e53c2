"""A toy command harness: answers with the last number in the question.

Reads the task on stdin (Benchbook also puts it in $BENCHBOOK_TASK), writes one trace event to
$BENCHBOOK_TRACE_FILE and prints the answer on stdout. Wrong on most GSM8K cases, on purpose.
"""

import json
import os
import re
import sys

task = sys.stdin.read()
numbers = re.findall(r"-?\d+(?:\.\d+)?", task.replace(",", ""))
answer = numbers[-1] if numbers else "0"
trace_file = os.environ.get("BENCHBOOK_TRACE_FILE")
if trace_file:
    with open(trace_file, "a", encoding="utf-8") as f:
        event = {"type": "tool_call", "name": "regex", "arguments": {"found": len(numbers)}}
        f.write(json.dumps(event) + "\n")
        f.write(json.dumps({"type": "note", "text": f"picked {answer}"}) + "\n")
print(f"FINAL ANSWER: {answer}")
