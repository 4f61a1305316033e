"""Maven: reactors, POMs, Surefire reports, JaCoCo coverage, the test configuration a
patch may not weaken, Java shadowing, the Java contract kinds and the JDK each side
builds with. ``.ecosystem`` implements the interface."""
