"""Dockerfiles: the repository's images, built and compared base against patched.
``.ecosystem`` implements the interface."""
