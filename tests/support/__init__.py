"""What the tests are built from: the loopback test website (``site``), faithful fakes of third
parties (``fakes``), the collection stack, bounded waits, the books check and the other helpers
the test modules share."""
