"""Install the trainer stack (vLLM, torch, transformers, ...) into the running Python's venv.

Run it with the project venv's interpreter: `.venv/bin/python scripts/install_trainer_stack.py`. It
picks requirements-trainer-gpu.txt when `nvidia-smi -L` lists a GPU, else requirements-trainer-cpu.txt
(override with `--flavor` or TRAINER_STACK=cpu|gpu), and follows the file's `#@` directives:

    #@ conflicts: NAME ...        uninstalled first when present (the other flavor's vLLM)
    #@ no-deps: NAME==VERSION ... installed with --no-deps after the file
    #@ post-uninstall: NAME ...   uninstalled afterwards when present

A venv already holding every pin at its version (none of the removed packages) and a stamp file
matching the requirements file returns at once. Standard library only: it runs before anything else.
"""
import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
STAMP = Path(sys.prefix) / ".installed-trainer-stack.json"  # beside ensure_venv.py's stamps
FLAVORS = ("cpu", "gpu")
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)\s*(===?)\s*(\S+)$")
DIRECTIVE = re.compile(r"^#@\s*(conflicts|no-deps|post-uninstall):\s*(.+)$")


@dataclass
class Pin:
    name: str
    operator: str
    version: str

    def __str__(self):
        return f"{self.name}{self.operator}{self.version}"

    def satisfied_by(self, installed: str | None) -> bool:
        if installed is None:
            return False
        if self.operator == "===" or "+" in self.version:
            return installed == self.version
        return installed.split("+", 1)[0] == self.version  # PEP 440: ==X accepts X+local


@dataclass
class StackFile:
    path: Path
    pins: list[Pin] = field(default_factory=list)
    no_deps: list[Pin] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)
    post_uninstall: list[str] = field(default_factory=list)

    @property
    def digest(self) -> str:
        return hashlib.sha256(self.path.read_bytes()).hexdigest()


def parse_pin(text: str, where: str) -> Pin:
    match = PIN.match(text.strip())
    if not match:
        raise SystemExit(f"{where}: expected NAME==VERSION, got {text.strip()!r}")
    return Pin(*match.groups())


def parse_stack_file(path: Path) -> StackFile:
    stack = StackFile(path)
    for number, line in enumerate(path.read_text().splitlines(), 1):
        where = f"{path.name}:{number}"
        directive = DIRECTIVE.match(line.strip())
        if directive:
            kind, values = directive.group(1), directive.group(2).split()
            if kind == "no-deps":
                stack.no_deps += [parse_pin(value, where) for value in values]
            else:
                getattr(stack, kind.replace("-", "_")).extend(values)
        elif line.strip() and not line.lstrip().startswith("#"):
            stack.pins.append(parse_pin(line, where))
    return stack


def has_gpu() -> bool:
    if not shutil.which("nvidia-smi"):
        return False
    try:
        result = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return result.returncode == 0 and "GPU" in result.stdout


def choose_flavor(requested: str | None) -> tuple[str, str]:
    requested = requested or os.environ.get("TRAINER_STACK") or "auto"
    if requested in FLAVORS:
        return requested, "requested"
    if requested != "auto":
        raise SystemExit(f"unknown flavor {requested!r}: use cpu, gpu or auto")
    return ("gpu", "nvidia-smi lists a GPU") if has_gpu() else ("cpu", "no working nvidia-smi")


def installed_version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def problems(stack: StackFile) -> list[str]:
    """What differs between the venv and the file; empty when it is installed as pinned."""
    found = []
    for pin in stack.pins + stack.no_deps:
        version = installed_version(pin.name)
        if not pin.satisfied_by(version):
            found.append(f"{pin} wanted, {version or 'nothing'} installed")
    for name in stack.conflicts + stack.post_uninstall:
        version = installed_version(name)
        if version is not None:
            found.append(f"{name} {version} should not be installed")
    return found


def read_stamp() -> dict:
    try:
        return json.loads(STAMP.read_text())
    except (OSError, ValueError):
        return {}


def pip(*args: str, dry_run: bool) -> None:
    command = [sys.executable, "-m", "pip", *args]
    print("+", " ".join(command), flush=True)
    if not dry_run:
        subprocess.run(command, check=True)


def present(names: list[str]) -> list[str]:
    return [name for name in names if installed_version(name) is not None]


def install(stack: StackFile, dry_run: bool) -> None:
    if conflicting := present(stack.conflicts):
        pip("uninstall", "-y", *conflicting, dry_run=dry_run)
    pip("install", "-r", str(stack.path), dry_run=dry_run)
    if stack.no_deps:
        pip("install", "--no-deps", *map(str, stack.no_deps), dry_run=dry_run)
    if leftovers := present(stack.post_uninstall):
        pip("uninstall", "-y", *leftovers, dry_run=dry_run)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--flavor", choices=("auto", *FLAVORS), help="default: TRAINER_STACK or auto")
    parser.add_argument("--check", action="store_true", help="only report; exit 1 when not installed")
    parser.add_argument("--force", action="store_true", help="reinstall even when up to date")
    parser.add_argument("--dry-run", action="store_true", help="print the pip commands, run none")
    args = parser.parse_args(argv)
    sys.stdout.reconfigure(line_buffering=True)  # keep our lines in order with pip's

    flavor, reason = choose_flavor(args.flavor)
    stack = parse_stack_file(PROJECT_ROOT / f"requirements-trainer-{flavor}.txt")
    stamp = {"flavor": flavor, "sha256": stack.digest}
    differences = problems(stack)
    if not args.force and not differences and read_stamp() == stamp:
        print(f"trainer stack ({flavor}, {reason}): up to date in {sys.prefix}")
        return 0
    if args.check:
        print(f"trainer stack ({flavor}): not installed as pinned in {sys.prefix}:")
        for line in differences or ["stamp file missing or from another requirements file"]:
            print("  -", line)
        return 1

    print(f"trainer stack ({flavor}, {reason}): installing {stack.path.name} into {sys.prefix}")
    started = time.monotonic()
    install(stack, args.dry_run)
    if args.dry_run:
        return 0
    if remaining := problems(stack):
        print("trainer stack: still not as pinned after installing:", *remaining, sep="\n  - ")
        return 1
    STAMP.write_text(json.dumps(stamp) + "\n")
    print(f"trainer stack ({flavor}): installed in {time.monotonic() - started:.0f} s; stamp {STAMP}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
