import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "servers"))
from checks import checks, pytest_runtest_call, pytest_terminal_summary  # noqa: E402, F401
