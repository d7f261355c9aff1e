# The model-health example: a deep sigmoid network with vanishing gradients
# (or, with --diverge, a learning rate that drives the loss to NaN).
add_executable(train_health ${CMAKE_CURRENT_SOURCE_DIR}/train_health.c)
target_link_libraries(train_health PRIVATE mlprof_shared m)
