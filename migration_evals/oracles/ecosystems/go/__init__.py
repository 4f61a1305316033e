"""Go: modules, ``go test -json`` reports, coverage profiles, build constraints and
directives, shadowing of modules and the Go contract kinds. ``.ecosystem`` implements
the interface."""
