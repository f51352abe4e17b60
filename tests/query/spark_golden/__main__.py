from tests.query.spark_golden.runner import main

main()
