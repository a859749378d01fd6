"""An install works from any directory: `cmake --install` into a fresh
prefix, then the installed uniperf, run from an unrelated directory, finds
its plugins (lib/uniperf) and the shipped suites and configs
(share/uniperf) by name: `uniperf run quick -c tcp` runs the stock quick
suite over kernel TCP and writes ok records. A name that is neither here nor
shipped is bad input naming it. And a plugin builds out of the tree against
the install (its headers and find_package(uniperf)): plugins/template,
copied elsewhere, built with uniperf_add_plugin(), is listed as available by
the installed uniperf through UNIPERF_PLUGIN_PATH. Before, an install had the
binary and the plugins only: nothing to run, nothing to build against.

The same holds for the Debian package (cpack -G DEB), unpacked into an
empty directory tree with dpkg-deb -x: its usr/bin/uniperf runs the quick
suite. The install carries the man page and the bash completion generated
from the CLI's --help.

usage: install_e2e.py CMAKE CPACK BUILD_DIR SOURCE_DIR CXX_COMPILER GENERATOR
"""
import glob, json, os, shutil, subprocess, sys, tempfile

cmake, cpack, build, source, compiler, generator = sys.argv[1:7]
failures = []


def check(condition, what):
    if not condition:
        failures.append(what)
    return condition


with tempfile.TemporaryDirectory() as work:
    prefix = os.path.join(work, "prefix")
    installed = subprocess.run([cmake, "--install", build, "--prefix", prefix],
                               capture_output=True, text=True)
    if installed.returncode != 0:
        sys.exit(f"cmake --install failed: {installed.stderr}")
    uniperf = os.path.join(prefix, "bin", "uniperf")
    for shipped in ["share/uniperf/suites/quick.yaml", "share/uniperf/configs/tcp.yaml",
                    "share/man/man1/uniperf.1", "share/bash-completion/completions/uniperf",
                    "include/uniperf/plugin.hpp", "lib/cmake/uniperf/uniperfConfig.cmake",
                    "share/uniperf/configs/udapl-rxe.dat.conf", "lib/uniperf/libuniperf-tcp.so"]:
        check(os.path.isfile(os.path.join(prefix, shipped)), f"not installed: {shipped}")
    check(not os.path.exists(os.path.join(prefix, "share/uniperf/configs/template.yaml")),
          "configs/template.yaml is installed, its plugin is not")

    elsewhere = os.path.join(work, "elsewhere")
    os.mkdir(elsewhere)

    def runs_quick(uniperf, what):
        """The shipped quick suite over tcp, by name, from an unrelated directory."""
        results = os.path.join(elsewhere, "r.jsonl")
        if os.path.exists(results):
            os.remove(results)
        run = subprocess.run([uniperf, "run", "quick", "-c", "tcp", "-o", results, "--quiet"],
                             cwd=elsewhere, capture_output=True, text=True, timeout=600)
        check(run.returncode == 0, f"{what}: uniperf run quick -c tcp: exit {run.returncode}: "
                                   f"{run.stderr}")
        records = [json.loads(line) for line in open(results)] if os.path.exists(results) else []
        check(len(records) > 0, f"{what}: no records")
        check(all(r["config"] == "tcp" and r["suite"] == "quick" for r in records),
              f"{what}: records of {sorted({(r['suite'], r['config']) for r in records})}")
        ok = [r for r in records if r["status"] == "ok"]
        check(len(ok) >= 5, f"{what}: only {len(ok)} ok records of {len(records)}")
        print(f"{what} ran the shipped quick suite over tcp: {len(ok)} ok of "
              f"{len(records)} records")

    runs_quick(uniperf, "the install")

    # The Debian package, unpacked where nothing else is.
    packaged = subprocess.run([cpack, "-G", "DEB", "--config",
                               os.path.join(build, "CPackConfig.cmake"), "-B",
                               os.path.join(work, "package")],
                              capture_output=True, text=True, timeout=600)
    debs = glob.glob(os.path.join(work, "package", "*.deb"))
    if check(packaged.returncode == 0 and len(debs) == 1,
             f"cpack -G DEB: exit {packaged.returncode}: {packaged.stdout[-2000:]}"
             f"{packaged.stderr[-2000:]}"):
        root = os.path.join(work, "unpacked")
        subprocess.run(["dpkg-deb", "-x", debs[0], root], check=True, timeout=120)
        runs_quick(os.path.join(root, "usr", "bin", "uniperf"), "the unpacked .deb")

    missing = subprocess.run([uniperf, "run", "nosuch", "-c", "tcp"], cwd=elsewhere,
                             capture_output=True, text=True, timeout=60)
    check(missing.returncode == 2 and "nosuch" in missing.stderr,
          f"a missing suite: exit {missing.returncode}: {missing.stderr}")

    # A plugin of one's own, built against the install.
    plugin_src = os.path.join(work, "my-plugin")
    os.mkdir(plugin_src)
    shutil.copy(os.path.join(source, "plugins/template/template_plugin.cpp"), plugin_src)
    with open(os.path.join(plugin_src, "CMakeLists.txt"), "w") as f:
        f.write("cmake_minimum_required(VERSION 3.22)\n"
                "project(my_plugin LANGUAGES CXX)\n"
                "find_package(uniperf REQUIRED)\n"
                "uniperf_add_plugin(template SOURCES template_plugin.cpp)\n")
    plugin_build = os.path.join(work, "my-plugin-build")
    configured = subprocess.run(
        [cmake, "-S", plugin_src, "-B", plugin_build, "-G", generator,
         f"-DCMAKE_PREFIX_PATH={prefix}", f"-DCMAKE_CXX_COMPILER={compiler}"],
        capture_output=True, text=True, timeout=300)
    built = configured.returncode == 0 and subprocess.run(
        [cmake, "--build", plugin_build], capture_output=True, text=True,
        timeout=600).returncode == 0
    if check(built, f"the template plugin did not build against the install: "
                    f"{configured.stdout[-2000:]}{configured.stderr[-2000:]}"):
        env = dict(os.environ, UNIPERF_PLUGIN_PATH=os.path.join(plugin_build, "lib", "uniperf"))
        listed = subprocess.run([uniperf, "list"], cwd=elsewhere, env=env, capture_output=True,
                                text=True, timeout=60)
        line = next((l for l in listed.stdout.splitlines() if l.startswith("template ")), "")
        check(line.endswith("available") and "unavailable" not in line,
              f"uniperf list does not show the plugin built out of tree: {listed.stdout}"
              f"{listed.stderr}")
        print(f"built out of tree and listed: {line}")

for failure in failures:
    print("FAIL", failure)
sys.exit(1 if failures else 0)
