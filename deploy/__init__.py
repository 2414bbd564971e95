"""Serving roofline from several replicas: haproxy on one machine (serve.py), Kubernetes (k8s.yaml)."""
