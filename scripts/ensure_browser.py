"""Make sure Debian's chromium is installed for the browser tests (stdlib only).

Playwright drives it through `executable_path`; Playwright's own browser
downloads are never used (this machine and CI reach package registries only).
Installing needs root, which CI has; elsewhere the message says what to run.
"""
import os
import shutil
import subprocess
import sys

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")


def main() -> int:
    if shutil.which(CHROMIUM):
        return 0
    if os.geteuid() != 0:
        print(f"Browser tests need Debian's chromium at {CHROMIUM}: run `sudo apt-get install -y chromium`"
              " (or set CHROMIUM to another Chromium binary).", file=sys.stderr)
        return 0  # the browser tests say the same and are skipped outside CI
    print("Installing Debian's chromium for the browser tests...", flush=True)
    install = ["apt-get", "install", "-y", "--no-install-recommends", "chromium"]
    if subprocess.run(install).returncode != 0:
        # A fresh machine may have no package lists yet.
        subprocess.run(["apt-get", "update"], check=False)
        return subprocess.run(install).returncode
    return 0


if __name__ == "__main__":
    sys.exit(main())
