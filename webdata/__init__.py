"""What every part of the platform shares and that depends on nothing else (``config``)."""
