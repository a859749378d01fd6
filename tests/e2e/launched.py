"""What the e2e scripts that start uniperf under a launcher share: running a
command bounded in time with everything it started, and reading a results
file. Imported from the scripts' own directory (Python puts it first on
the path)."""
import json, os, signal, subprocess, time


def run_once(argv, env, timeout, cwd=None):
    """Runs argv in a session of its own; one that outlives `timeout` is
    killed with its whole process group (the launcher and every rank) and
    is an exit of 124. Returns (CompletedProcess, seconds)."""
    started = time.monotonic()
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env=env, cwd=cwd, start_new_session=True)
    try:
        out, err = process.communicate(timeout=timeout)
        code = process.returncode
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        out, err = process.communicate()
        code, err = 124, f"timed out after {timeout} s\n{err}"
    return subprocess.CompletedProcess(argv, code, out, err), time.monotonic() - started


def records(path):
    """Every record of a JSON Lines results file (each line must be whole)."""
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]
