"""Stand-ins for what a test cannot provoke for real: a full disk, and torch.cuda's generator on a machine
without a GPU."""

import errno
import os

import torch


class DiskFile:
    """A file on a disk with `room` bytes left: the writes past them fail with ENOSPC, as a full disk's do."""

    def __init__(self, handle, room):
        self.handle, self.room = handle, room

    def write(self, data):
        if len(data) > self.room:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        self.room -= len(data)
        return self.handle.write(data)

    def __getattr__(self, name):
        return getattr(self.handle, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.handle.close()


class FullDisk:
    """Stands in for nmt.base.atomic's `os` module: the files write_atomic opens have `room` bytes left."""

    def __init__(self, room):
        self.room = room

    def fdopen(self, fd, mode):
        return DiskFile(os.fdopen(fd, mode), self.room)

    def __getattr__(self, name):
        return getattr(os, name)


class FakeCudaRng:
    """Stands in for torch.cuda's generator functions on a machine without a GPU: records every call."""

    def __init__(self):
        self.gets, self.sets = [], []

    def get_rng_state(self, device="cuda"):
        state = torch.full((16,), 100 + len(self.gets), dtype=torch.uint8)  # a new state at every call
        self.gets.append((torch.device(device), state))
        return state

    def set_rng_state(self, new_state, device="cuda"):
        assert new_state.device.type == "cpu" and new_state.dtype == torch.uint8  # as torch.cuda requires
        self.sets.append((torch.device(device), new_state.clone()))
