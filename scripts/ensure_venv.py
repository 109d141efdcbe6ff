"""Create .venv if needed and install a requirements file into it, only when it changed.

Run with the system python3 (stdlib only): `python3 scripts/ensure_venv.py requirements.txt`.

A stamp inside .venv records the hash of the requirements file and of every file
it includes with `-r`; a second call with the same files does nothing, so
`make run` is fast after the first time. The stamps live inside .venv so that a
deleted or recreated venv is always reinstalled.
"""
import hashlib
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / ".venv"
PYTHON = VENV / "bin" / "python"


def included_files(requirements: Path) -> list[Path]:
    """The file itself and, recursively, the files it pulls in with `-r`."""
    files = [requirements]
    for line in requirements.read_text().splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] in ("-r", "--requirement"):
            files += included_files(requirements.parent / parts[1])
    return files


def requirements_hash(requirements: Path) -> str:
    digest = hashlib.sha256()
    for path in included_files(requirements):
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def stamp_path(requirements: Path) -> Path:
    return VENV / f".installed-{requirements.name}.sha256"


def is_installed(requirements: Path) -> bool:
    stamp = stamp_path(requirements)
    return stamp.exists() and stamp.read_text().strip() == requirements_hash(requirements)


def venv_works() -> bool:
    # A venv copied from another machine or left by an uninstalled python has a
    # dangling interpreter; recreate it rather than fail obscurely in pip.
    try:
        return subprocess.run([str(PYTHON), "-c", "pass"], capture_output=True).returncode == 0
    except OSError:
        return False


def ensure_venv() -> None:
    if PYTHON.exists() and venv_works():
        return
    print(f"Creating the virtualenv in {VENV} ...", flush=True)
    try:
        venv.EnvBuilder(with_pip=True, clear=VENV.exists()).create(VENV)
    except subprocess.CalledProcessError:
        raise SystemExit(f"{sys.executable} cannot create a virtualenv with pip (ensurepip failed). "
                         "On Debian or Ubuntu: apt-get install python3-venv") from None


def install(requirements: Path) -> None:
    print(f"Installing {requirements.name} into .venv (once per change of the file) ...", flush=True)
    subprocess.run(
        [str(PYTHON), "-m", "pip", "install", "--disable-pip-version-check", "--no-input",
         "-r", str(requirements)],
        check=True,
    )
    # Everything the file includes is now installed too: stamp those as well,
    # so `make run` after `make test` does not reinstall requirements.txt.
    for path in included_files(requirements):
        stamp_path(path).write_text(requirements_hash(path) + "\n")


def main(names: list[str]) -> int:
    if not names:
        print("usage: python3 scripts/ensure_venv.py REQUIREMENTS_FILE...", file=sys.stderr)
        return 2
    ensure_venv()
    for name in names:
        requirements = (ROOT / name).resolve()
        if not is_installed(requirements):
            install(requirements)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except subprocess.CalledProcessError as exc:
        print(f"ensure_venv: {' '.join(exc.cmd[:4])} ... failed with exit code {exc.returncode}", file=sys.stderr)
        sys.exit(1)
