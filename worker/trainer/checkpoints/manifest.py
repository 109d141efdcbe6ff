"""What a worker says a checkpoint it uploaded holds: shared by the trainer, which writes it,
and the control plane, which checks every file against it before it lists the checkpoint."""
from pathlib import Path, PurePosixPath

from pydantic import BaseModel, ConfigDict, Field, field_validator

# The control plane's tar of an uploaded checkpoint (runs/checkpoints/views/upload.py) holds,
# beside the checkpoint folder, the manifest it checked the upload against, for the worker that
# resumes from it to check what it unpacked (fetch.py).
ARCHIVE_MANIFEST = "checkpoint-manifest.json"


def safe_relative_path(path: str) -> str:
    """`path` as a relative POSIX path inside a checkpoint folder; ValueError for one that would
    leave it (absolute, `..`, empty parts)."""
    parts = PurePosixPath(path).parts
    if not parts or path.startswith("/") or any(part in ("", ".", "..") for part in parts) or "\\" in path:
        raise ValueError(f"{path!r} is not a relative path inside the checkpoint")
    return "/".join(parts)


class ManifestFile(BaseModel):
    model_config = ConfigDict(extra="forbid")
    path: str = Field(min_length=1, max_length=500)
    size: int = Field(ge=0)
    sha256: str = Field(pattern="^[0-9a-f]{64}$")

    @field_validator("path")
    @classmethod
    def _inside(cls, path: str) -> str:
        return safe_relative_path(path)


class CheckpointManifest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    step: int = Field(ge=0)
    model_version: int = Field(0, ge=0)
    local_path: str = Field(min_length=1, max_length=1000, description="Where the worker wrote it.")
    files: list[ManifestFile] = Field(min_length=1, max_length=10_000)

    @property
    def size_bytes(self) -> int:
        return sum(file.size for file in self.files)


class DeclaredFile(BaseModel):
    model_config = ConfigDict(extra="forbid")
    path: str = Field(min_length=1, max_length=500)
    size: int = Field(ge=0)

    @field_validator("path")
    @classmethod
    def _inside(cls, path: str) -> str:
        return safe_relative_path(path)


class UploadDeclaration(BaseModel):
    """The files a worker will send of one checkpoint, before it sends them: the control plane
    refuses a chunk of any other, naming it. Their sha256s come with the manifest at the end."""
    model_config = ConfigDict(extra="forbid")
    files: list[DeclaredFile] = Field(min_length=1, max_length=10_000)


def files_in(folder: Path) -> list[str]:
    """The relative paths of a checkpoint folder's files (links left out), in a stable order."""
    return [path.relative_to(folder).as_posix()
            for path in sorted(Path(folder).rglob("*")) if path.is_file() and not path.is_symlink()]
