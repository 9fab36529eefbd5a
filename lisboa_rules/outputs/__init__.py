"""The only stage that touches the disk: the atomic writer and its helpers."""
