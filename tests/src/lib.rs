//! Tests of the packaged `.fmu` from outside (skeleton: they arrive with the packaging
//! issue, once there is an artefact to test).
