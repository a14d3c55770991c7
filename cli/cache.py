"""`sourcead cache info` and `sourcead cache clear`: the disk cache of generated modules."""

from __future__ import annotations

import click

from sourcead.compile import cache_info, clear_cache


@click.group()
def cache() -> None:
    """The cache of generated modules and numba's machine code ($SOURCEAD_CACHE_DIR)."""


@cache.command()
def info() -> None:
    """Print the cache folder and what it holds."""
    found = cache_info()
    click.echo(f"cache folder: {found['path']}")
    click.echo(f"generated modules: {found['modules']}")
    click.echo(f"key files: {found['keys']}")
    click.echo(f"numba cache files: {found['numba']}")
    if found["partial"]:
        click.echo(f"unfinished writes: {found['partial']}")
    click.echo(f"size: {found['bytes'] / 1024:.1f} KiB")
    if found["numba_cache_dir"]:
        click.echo(f"note: NUMBA_CACHE_DIR={found['numba_cache_dir']}: numba keeps its machine code there instead")


@cache.command()
def clear() -> None:
    """Delete sourcead's files from the cache folder (nothing else in it is touched)."""
    click.echo(f"deleted {clear_cache()} files")
