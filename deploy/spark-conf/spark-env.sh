# Sourced by spark-submit in the Airflow containers (SPARK_CONF_DIR). The driver runs there, in
# client mode: it must listen on and advertise the container's own address, so that executors on
# the spark-worker container can reach it (a task's default SPARK_LOCAL_IP, 127.0.0.1, is only
# right for a local master).
SPARK_LOCAL_IP="$(hostname -i | awk '{print $1}')"
