"""Independent privacy audit of the strict-mode mechanisms on the sphere S² (DESIGN §12).

The oracle (:mod:`tests.audit._oracle`, with the regression energies and their gradients in
:mod:`tests.audit._oracle_regression`) re-implements the geometry of S², the energies, their
gradients, the Fréchet mean and the quadrature rules in plain numpy, without importing
``dpcore.mechanisms``, ``dpcore.sampling``, ``dpcore.sensitivity`` or the library's regression
gradients. The library is used only as a black box (``dpcore.release``) and for the inputs the
brief allows (``Sphere(2)`` to pass to the releases, the non-private regression fit for the
sequential scheme).
"""
