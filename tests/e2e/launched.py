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


def rank_signalled(mpirun, np, rank, signal_name, uniperf, suite, config, work, name, env,
                   after_s=4, timeout=240):
    """A job of `np` ranks under `mpirun` (the launcher's argv) running
    `suite` over `config`, whose rank `rank` gets `signal_name` (kill's
    spelling: 9, STOP) `after_s` seconds in. Each rank's stderr goes to
    WORK/NAME-rankR.err, the results to WORK/NAME.jsonl. Returns the result,
    its seconds, rank 0's stderr and the records kept (every line whole)."""
    out = os.path.join(work, name + ".jsonl")
    script = (f'if [ "$OMPI_COMM_WORLD_RANK" = {rank} ]; then '
              f'(sleep {after_s}; kill -{signal_name} $$) & fi; '
              f'exec {uniperf} run {suite} -c {config} -o {out} '
              f'2>{work}/{name}-rank$OMPI_COMM_WORLD_RANK.err')
    result, seconds = run_once(mpirun + ["-np", str(np), "sh", "-c", script], env, timeout)
    said = open(os.path.join(work, f"{name}-rank0.err")).read()
    kept = records(out) if os.path.exists(out) else []
    return result, seconds, said, kept
