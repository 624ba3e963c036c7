"""The slice job's former dotted name, ``worker.collections.run_slice``: RQ imports a job's
function by the name it was enqueued with, and slice jobs queued by a release before the
collections moved to :mod:`collecting` may still wait in Redis after an upgrade. New jobs are
enqueued as :data:`collecting.control.SLICE_JOB`; nothing imports this module. Remove it a
release later."""

from collecting.slice import run_slice

__all__ = ["run_slice"]
