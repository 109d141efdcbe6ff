"""The one door from the control plane into the trainer's behaviour: its dry runs, its checks and
the catalogs it shows as forms.

The control plane (runs/, controlplane/) imports from the trainer only the schemas both sides
share (config, spec, events, checkpoint manifest, model paths, hub ids) and the modules of this
package; tests/test_layering.py holds it to that. Each module re-exports, by subject, the few
names the control plane uses, so a trainer module can move without a search through runs/.

Every module here is light to import (no torch, no vLLM, no transformers): the web process
loads them at start-up. `served_models` (judges, reward models, a vLLM server) is imported only
inside the consumer's functions that start them.
"""
