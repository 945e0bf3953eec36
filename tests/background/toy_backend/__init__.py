"""A third backend, ``--on toy``, made only of what a new backend writes: a package of the shape every
backend has (its spec, its backend, its handle) over the shared parts of the backends' package, and
one registration -- no file of execmagic names it.

Its "cluster" is this machine: a job is a local process whose stdout and stderr go to files in a
folder (as a cluster job's go to a shared folder), fed to the reader by the shared poller.
"""
