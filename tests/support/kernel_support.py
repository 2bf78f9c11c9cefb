"""A loaded Module without a GPU: the registration route's look-ups over an image's own
kernel names (which need no device), for tests of lookup and of what a Module reads
from its image. Registering with the runtime needs a GPU, so the handles are made up."""

from __future__ import annotations

import types

import cudart
from cudart.kernels._images import image_kind, inspect_image
from cudart.kernels._module import Module
from cudart.kernels._routes import RegisteredLoader


class ListingLoader(RegisteredLoader):
    """RegisteredLoader's find/function/names over `names`, counting the listings."""

    def __init__(self, names):
        self.registration = types.SimpleNamespace(
            functions={n: 0x10000 + 16 * k for k, n in enumerate(names)}
        )
        self.listings = 0

    def names(self):
        self.listings += 1
        return super().names()

    def close(self):
        pass


def module_of(data: bytes, names=None) -> Module:
    """A Module of the image `data`, its kernels those the image names (or `names`)."""
    if names is None:
        names = inspect_image(data).functions or ()
    kind = image_kind(data) if data else "cubin"
    return Module(cudart.sys, kind, data, ListingLoader(names))
