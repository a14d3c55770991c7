"""`sourcead cache info` and `sourcead cache clear`: the disk cache of generated modules."""

from __future__ import annotations

import click

from sourcead.build.cache_admin import cache_info, clear_cache


@click.group()
def cache() -> None:
    """The cache of generated modules and numba's machine code ($SOURCEAD_CACHE_DIR).

    sourcead imports from it only what belongs to you and nobody else can write; anything else
    is refused, and `sourcead cache clear` is the fix.
    """


@cache.command()
def info() -> None:
    """Print the cache folder, what it holds, and what in it would be refused and why."""
    found = cache_info()
    click.echo(f"cache folder: {found['path']}")
    click.echo(f"generated modules: {found['modules']}")
    click.echo(f"key files: {found['keys']}")
    click.echo(f"numba cache files: {found['numba']}")
    if found["partial"]:
        click.echo(f"unfinished writes: {found['partial']}")
    click.echo(f"size: {found['bytes'] / 1024:.1f} KiB")
    for path, why in found["untrusted"]:
        click.echo(f"refused: {path} {why}")
    if found["fix"]:
        click.echo(f"fix: {found['fix']}")
    if found["numba_cache_dir"]:
        click.echo(
            f"note: NUMBA_CACHE_DIR={found['numba_cache_dir']} is not used for sourcead's modules: "
            "their machine code stays in this folder"
        )


@cache.command()
def clear() -> None:
    """Delete sourcead's files from the cache folder and make it private (0700) again.

    Nothing else in the folder is touched. This is the fix when the cache is refused because
    it, or something in it, belongs to another user or could be written by others.
    """
    click.echo(f"deleted {clear_cache()} files")
