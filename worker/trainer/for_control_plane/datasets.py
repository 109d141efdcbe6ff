"""The built-in dataset generators: their parameters shown as forms, their rows previewed and
checked before a dataset is saved."""
from worker.trainer.data.generators import GENERATORS, generate

__all__ = ["GENERATORS", "generate"]
