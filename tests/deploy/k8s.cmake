# The Kubernetes manifests (deploy/k8s) against the Kubernetes API schemas, with the validator from
# npm (deploy/k8s/validate, installed by scripts/setup.sh). No cluster and no build needed. A missing
# node or npm packages fail these tests (run_k8s_validator.cmake names scripts/setup.sh).
get_filename_component(TUNEFARM_K8S_REPO "${CMAKE_CURRENT_LIST_DIR}/../.." ABSOLUTE)
find_program(NODE node)
set(tunefarm_k8s_run ${CMAKE_COMMAND} -DNODE=${NODE} -DVALIDATE_DIR=${TUNEFARM_K8S_REPO}/deploy/k8s/validate)

add_test(NAME Deploy.K8sManifestsMatchTheApiSchemas
         COMMAND ${tunefarm_k8s_run} -DMANIFESTS=${TUNEFARM_K8S_REPO}/deploy/k8s -DEXPECT=pass
                 -P ${CMAKE_CURRENT_LIST_DIR}/run_k8s_validator.cmake
         WORKING_DIRECTORY ${TUNEFARM_K8S_REPO})
# The negative control: a misspelled field and a wrong type must both be reported, with a failing exit.
add_test(NAME Deploy.K8sValidatorRejectsABrokenManifest
         COMMAND ${tunefarm_k8s_run} -DMANIFESTS=${CMAKE_CURRENT_LIST_DIR}/k8s_bad -DEXPECT=fail
                 "-DEXPECT_OUTPUT=bad.yaml#0 Deployment tunefarm/broken: data/spec/replicas must be integer|unknown field \"spec.template.spec.containers[0].imagePullPolcy\"|ok Service tunefarm/fine"
                 -P ${CMAKE_CURRENT_LIST_DIR}/run_k8s_validator.cmake
         WORKING_DIRECTORY ${TUNEFARM_K8S_REPO})
set_tests_properties(Deploy.K8sManifestsMatchTheApiSchemas Deploy.K8sValidatorRejectsABrokenManifest
                     PROPERTIES LABELS "unit" TIMEOUT 60)
