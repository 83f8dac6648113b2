"""Training pipeline for gammond's nets (needs the `train` extra: torch, onnx, matplotlib, bgsage). Never imported
by the daemon."""
